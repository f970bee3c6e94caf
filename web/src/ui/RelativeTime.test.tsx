import { act, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RelativeTime } from "./RelativeTime";

describe("RelativeTime", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-07-25T12:00:00Z"));
  });
  afterEach(() => vi.useRealTimers());

  it("keeps counting while it is on screen", () => {
    render(<RelativeTime iso="2026-07-25T11:59:42Z" />);
    expect(screen.getByText("18 s ago")).toBeVisible();
    act(() => {
      vi.advanceTimersByTime(5_000);
    });
    expect(screen.getByText("23 s ago")).toBeVisible();
    act(() => {
      vi.advanceTimersByTime(60_000);
    });
    expect(screen.getByText("1 min ago")).toHaveAttribute("dateTime", "2026-07-25T11:59:42Z");
  });

  it("says never for a time that is not there", () => {
    render(<RelativeTime iso={null} />);
    expect(screen.getByText("never")).toBeVisible();
  });
});
