import { describe, expect, it } from "vitest";
import { failedContract, makeChange, makePackage } from "../../test/providers";
import { approvalHolds, compareVersions, groupChecks, healthOf, upgradesFor } from "./look";

describe("how providers read", () => {
  it("orders versions as numbers, a pre-release before its release", () => {
    expect(compareVersions("1.10.0", "1.9.0")).toBe(1);
    expect(compareVersions("1.0.0", "1.0.0")).toBe(0);
    expect(compareVersions("1.0.0-rc.1", "1.0.0")).toBe(-1);
    expect(compareVersions("1.0.0-rc.2", "1.0.0-rc.10")).toBe(-1);
    expect(compareVersions("2.0.0+build.7", "2.0.0")).toBe(0);
  });

  it("offers as upgrades only higher versions of the same provider, highest first", () => {
    const packages = [
      makePackage({ ref: "a", version: "1.2.0" }),
      makePackage({ ref: "b", version: "1.10.0" }),
      makePackage({ ref: "c", version: "1.0.0" }),
      makePackage({ ref: "d", id: "other", version: "9.0.0" }),
    ];
    expect(upgradesFor({ id: "files", version: "1.0.0" }, packages).map((p) => p.ref)).toEqual(["b", "a"]);
  });

  it("puts the capabilities with failed checks first, and failed checks first in each", () => {
    const groups = groupChecks(failedContract);
    expect(groups.map((g) => [g.capability, g.failed])).toEqual([
      ["files.file.write", 1],
      ["files.file.list", 0],
      [null, 0],
    ]);
    expect(groups[0]!.checks.map((c) => c.passed)).toEqual([false, true]);
  });

  it("holds an approval for each blocker and for a failed contract", () => {
    expect(approvalHolds(makeChange())).toEqual([]);
    expect(approvalHolds(makeChange({ blockers: ["2 executions in flight"], contract: failedContract }))).toEqual([
      "2 executions in flight",
      "The contract kit failed 1 check: the package is not fit to run.",
    ]);
  });

  it("reads health from the newest probe", () => {
    expect(healthOf([]).label).toBe("Not checked yet");
    expect(healthOf([{ ok: true, detail: "", checkedAt: "2026-07-24T12:00:00Z" }]).tone).toBe("ok");
  });
});
