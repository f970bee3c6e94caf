// A row of tabs over one panel (WAI-ARIA tabs): the selected tab is the only one in the tab
// order; arrow keys, Home and End move between tabs, select them and keep focus on them.

import { useRef, type KeyboardEvent, type ReactNode } from "react";

export type TabItem<T extends string> = { id: T; label: string };

export function Tabs<T extends string>({
  tabs,
  current,
  onSelect,
  label,
  idPrefix,
  children,
}: {
  tabs: ReadonlyArray<TabItem<T>>;
  current: T;
  onSelect: (id: T) => void;
  label: string;
  /** Makes the tabs' and the panel's element ids: `${idPrefix}-tab-${id}`, `${idPrefix}-panel`. */
  idPrefix: string;
  children: ReactNode;
}) {
  const refs = useRef<Array<HTMLButtonElement | null>>([]);

  function onKey(e: KeyboardEvent<HTMLDivElement>) {
    const i = tabs.findIndex((t) => t.id === current);
    let next = -1;
    if (e.key === "ArrowRight") next = (i + 1) % tabs.length;
    else if (e.key === "ArrowLeft") next = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = tabs.length - 1;
    if (next >= 0) {
      e.preventDefault();
      onSelect(tabs[next]!.id);
      refs.current[next]?.focus();
    }
  }

  return (
    <>
      <div className="tabs" role="tablist" aria-label={label} onKeyDown={onKey}>
        {tabs.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`${idPrefix}-tab-${t.id}`}
            aria-selected={t.id === current}
            aria-controls={`${idPrefix}-panel`}
            tabIndex={t.id === current ? 0 : -1}
            className="tab"
            onClick={() => onSelect(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div id={`${idPrefix}-panel`} role="tabpanel" aria-labelledby={`${idPrefix}-tab-${current}`} className="tab-panel">
        {children}
      </div>
    </>
  );
}
