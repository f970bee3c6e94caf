import { vi } from "vitest";
import { ApiError } from "../api/client";
import type { Approval, ApprovalDecision, ProjectDetail } from "../api/types";

export function makeApproval(overrides: Partial<Approval> = {}): Approval {
  return {
    id: "apr_1",
    projectId: "prj_1",
    invocationId: "ivk_1",
    agentId: "agent_1",
    capability: "scheduling.schedule.publish",
    instance: "plant-1",
    params: { draftId: "draft-7", basedOnVersion: 3 },
    paramsDigest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    resourceVersion: "3",
    summary: "Publish draft-7 as schedule version 4 of plant-1",
    impact: "12 operations move on 3 machines; 2 orders finish later.",
    draft: { draftId: "draft-7", lateOrders: [] },
    conversationId: "conv_1",
    taskId: null,
    requestedFor: "user:u1",
    assignee: null,
    status: "pending",
    decidedBy: null,
    decidedByName: null,
    decidedAt: null,
    reason: null,
    permissionId: null,
    expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
    createdAt: new Date(Date.now() - 60_000).toISOString(),
    sequence: 40,
    executionId: null,
    canDecide: true,
    ...overrides,
  };
}

export const project: ProjectDetail = {
  id: "prj_1",
  name: "Plant 1 scheduling",
  context: null,
  workingDirectory: null,
  createdBy: "user:u1",
  createdAt: "2026-07-24T10:00:00.000Z",
  updatedAt: "2026-07-24T10:00:00.000Z",
  role: "owner",
  members: [
    { userId: "u1", displayName: "Ana", email: "ana@example.test", role: "owner" },
    { userId: "u2", displayName: "Bo", email: "bo@example.test", role: "editor" },
    { userId: "u3", displayName: "Cy", email: "cy@example.test", role: "viewer" },
  ],
};

export function decided(a: Approval, decision: ApprovalDecision, by = "Ana"): Approval {
  return {
    ...a,
    status: decision.decision === "approve" ? "approved" : "rejected",
    decidedBy: "user:u1",
    decidedByName: by,
    decidedAt: "2026-07-24T12:05:00.000Z",
    reason: decision.reason ?? null,
    permissionId: decision.decision === "approve" && decision.standing ? "perm_1" : null,
    executionId: decision.decision === "approve" ? "exe_1" : null,
  };
}

export function fakeApprovalApi(approval: Approval) {
  return {
    decide: vi.fn(async (_id: string, decision: ApprovalDecision, _key?: string) => decided(approval, decision)),
    approval: vi.fn(async (_id: string) => approval),
    handOver: vi.fn(async (_id: string, userId: string, _key?: string) => ({ ...approval, assignee: userId })),
    project: vi.fn(async (_id: string) => project),
  };
}

export function conflictOf(details: Record<string, unknown>, message: string) {
  return new ApiError("conflict", message, 409, details);
}
