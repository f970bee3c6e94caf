import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ContractResults } from "./ContractResults";

const check = (capability: string | null, passed = true) => ({
  capability,
  rule: capability ? "schema" : "health",
  name: `${capability ?? "provider"} check`,
  passed,
  detail: passed ? "" : "answered Completed",
});

describe("the contract kit's results", () => {
  it("counts passed checks by capability and the provider as a whole, not as one more capability", () => {
    const report = { passed: true, checks: [check("files.list"), check("files.read"), check(null)] };
    render(<ContractResults report={report} foldPassed />);
    expect(screen.getByText("3 passed checks of 2 capabilities and the provider as a whole")).toBeInTheDocument();
  });

  it("shows a failed capability unfolded, its rule and what the kit saw", () => {
    const report = { passed: false, checks: [check("files.list", false), check("files.read")] };
    render(<ContractResults report={report} foldPassed />);
    expect(screen.getByText(/answered Completed/)).toBeVisible();
    expect(screen.getByText("1 passed check of 1 capability")).toBeInTheDocument();
  });
});
