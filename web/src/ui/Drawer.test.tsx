import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { Drawer } from "./Drawer";
import { StatusPill, TaskStatusPill } from "./StatusPill";

function Harness() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open task
      </button>
      <Drawer open={open} title="Task detail" onClose={() => setOpen(false)}>
        <a href="#a">First link</a>
        <button type="button">Cancel task</button>
      </Drawer>
    </>
  );
}

describe("Drawer", () => {
  it("is a modal dialog that keeps focus inside and closes with Esc, giving focus back", async () => {
    const user = userEvent.setup();
    render(<Harness />);
    const opener = screen.getByRole("button", { name: "Open task" });
    await user.click(opener);
    const dialog = screen.getByRole("dialog", { name: "Task detail" });
    expect(dialog).toHaveAttribute("aria-modal", "true");
    expect(dialog).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("button", { name: "Close task detail" })).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("link", { name: "First link" })).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("button", { name: "Cancel task" })).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("button", { name: "Close task detail" })).toHaveFocus();
    await user.tab({ shift: true });
    expect(screen.getByRole("button", { name: "Cancel task" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(opener).toHaveFocus();
  });
});

describe("status", () => {
  it("is shown as text next to an icon, never by colour alone", () => {
    render(<StatusPill tone="success" icon="checkCircle" label="Succeeded" />);
    expect(screen.getByText("Succeeded")).toBeVisible();
  });

  it("says when the agent's connection is lost or a cancel was requested", () => {
    const { rerender } = render(
      <TaskStatusPill task={{ status: "running", cancelRequested: false, agentConnectionLost: true }} />,
    );
    expect(screen.getByText("Agent connection lost")).toBeVisible();
    rerender(<TaskStatusPill task={{ status: "running", cancelRequested: true, agentConnectionLost: false }} />);
    expect(screen.getByText("Cancel requested")).toBeVisible();
    rerender(<TaskStatusPill task={{ status: "cancelled", cancelRequested: true, agentConnectionLost: false }} />);
    expect(screen.getByText("Cancelled")).toBeVisible();
  });
});
