/** Every generated file's text, by its path relative to web/. */
export function generate(): Promise<Record<string, string>>;
export function payloadName(type: string): string;
export const OUTPUTS: Record<"openapi" | "facts" | "frames" | "protocol", string>;
