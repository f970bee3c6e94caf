import type { HTMLAttributes, ReactNode } from "react";

export function Card({
  children,
  className,
  as: Tag = "section",
  ...rest
}: HTMLAttributes<HTMLElement> & { children: ReactNode; as?: "section" | "article" | "div" | "li" }) {
  return (
    <Tag className={["card", className].filter(Boolean).join(" ")} {...rest}>
      {children}
    </Tag>
  );
}
