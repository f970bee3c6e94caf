import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { WorkspaceApi } from "../../api/hub";
import type { RunRecord } from "../../api/types";
import { WorkspaceContextProvider, type WorkspaceContextValue } from "../../app/workspace";
import type { Resource } from "../../lib/useResource";
import { makeApproval } from "../../test/governance";
import { RunRecordBody } from "./RunRecordView";

function resource<T>(data: T | undefined): Resource<T> {
  return { data, error: null, loading: false, reload: () => {}, setData: () => {} };
}

const value: WorkspaceContextValue = {
  api: {} as WorkspaceApi,
  workspace: { id: "ws_1", name: "Studio", role: "owner" } as WorkspaceContextValue["workspace"],
  user: { id: "u1", email: "ana@example.test", displayName: "Ana" } as WorkspaceContextValue["user"],
  agents: resource<WorkspaceContextValue["agents"]["data"] & object>([]),
  inbox: resource<NonNullable<WorkspaceContextValue["inbox"]["data"]>>(undefined),
  agentName: () => "planner",
  actorName: (actor) => (actor === "user:u1" ? "Ana" : actor === "hub" ? "LineUp" : "someone"),
};

const record: RunRecord = {
  execution: {
    id: "exe_1",
    invocationId: "ivk_1",
    agentId: "agent_1",
    capability: "scheduling.schedule.publish",
    instance: "plant-1",
    paramsDigest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    idempotencyKey: "lineup:exe_1",
    grantId: "grt_1",
    expectedVersion: "3",
    status: "failed",
    jobId: "job-9",
    attempts: 2,
    output: null,
    error: { code: "conflict", message: "draft-7 was made against version 3, not 4.", retryable: false },
    receipt: { jobId: "job-9", idempotencyKey: "lineup:exe_1", status: "failed" },
    startedAt: "2026-07-24T12:05:01.000Z",
    finishedAt: "2026-07-24T12:05:03.000Z",
    conversationId: "conv_1",
    projectId: "prj_1",
  },
  invocation: {
    id: "ivk_1",
    agentId: "agent_1",
    capability: "scheduling.schedule.publish",
    effect: "write",
    instance: "plant-1",
    params: { draftId: "draft-7", basedOnVersion: 3 },
    paramsDigest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    projectId: "prj_1",
    conversationId: "conv_1",
    taskId: null,
    onBehalfOf: "user:u1",
    status: "failed",
    createdAt: "2026-07-24T12:00:00.000Z",
  },
  approval: makeApproval({ status: "approved", decidedBy: "user:u1", decidedByName: "Ana", decidedAt: "2026-07-24T12:05:00.000Z" }),
  audit: [
    {
      seq: 17,
      at: "2026-07-24T12:05:00.000Z",
      kind: "approval.decided",
      actor: "user:u1",
      subject: "approval:apr_1",
      data: {},
      hash: "sha256:aaaabbbbccccddddeeee",
      prevHash: "sha256:0000",
    },
  ],
};

describe("a run record", () => {
  it("says a failure's error class and that it is not retryable, and who asked for whom", () => {
    render(
      <WorkspaceContextProvider value={value}>
        <RunRecordBody record={record} />
      </WorkspaceContextProvider>,
    );
    expect(screen.getByTestId("run-status")).toHaveTextContent("Failed");
    expect(screen.getByRole("status")).toHaveTextContent("conflict: draft-7 was made against version 3, not 4. — not retryable");
    expect(screen.getByText("Asked by").nextElementSibling).toHaveTextContent("planner");
    expect(screen.getByText("On behalf of").nextElementSibling).toHaveTextContent("Ana");
    expect(screen.getByText("Decided by").nextElementSibling).toHaveTextContent("Ana");
    expect(screen.getByText("Job").nextElementSibling).toHaveTextContent("job-9");
    expect(screen.getByText("Attempts").nextElementSibling).toHaveTextContent("2");
    const audit = screen.getByRole("list", { name: "Audit entries" });
    expect(within(audit).getByText("#17")).toBeVisible();
    expect(audit).toHaveTextContent("approval.decided");
    expect(audit).toHaveTextContent("sha256:aaaabbbbcccc…");
  });

  it("never shows the hub's internal keys", () => {
    const { container } = render(
      <WorkspaceContextProvider value={value}>
        <RunRecordBody record={record} />
      </WorkspaceContextProvider>,
    );
    expect(container).not.toHaveTextContent("lineup:exe_1");
    expect(container).toHaveTextContent("••• hidden");
  });
});
