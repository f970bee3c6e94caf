// The contract kit's report on one version: a line saying whether it passed, then the checks by
// capability, failed ones first with the rule that failed and what the kit saw.

import type { ContractReport } from "../../api/types";
import { Icon } from "../../ui";
import { groupChecks } from "./look";

export function ContractResults({ report, foldPassed = false }: { report: ContractReport; foldPassed?: boolean }) {
  const groups = groupChecks(report);
  const total = report.checks.length;
  const failed = groups.reduce((n, g) => n + g.failed, 0);
  const shown = foldPassed ? groups.filter((g) => g.failed > 0) : groups;
  const folded = foldPassed ? groups.filter((g) => g.failed === 0) : [];
  return (
    <div className="contract" data-passed={report.passed}>
      <p className={`contract-summary ${report.passed ? "contract-passed" : "contract-failed"}`} data-testid="contract-summary">
        <Icon name={report.passed ? "checkCircle" : "xCircle"} size={16} />
        {report.passed
          ? `Passed all ${total} check${total === 1 ? "" : "s"}`
          : `Failed ${failed} of ${total} check${total === 1 ? "" : "s"}`}
      </p>
      {shown.map((g) => (
        <CheckGroupView key={g.capability ?? ""} capability={g.capability} checks={g.checks} />
      ))}
      {folded.length > 0 ? (
        <details className="contract-folded">
          <summary>{foldedSummary(folded)}</summary>
          {folded.map((g) => (
            <CheckGroupView key={g.capability ?? ""} capability={g.capability} checks={g.checks} />
          ))}
        </details>
      ) : null}
    </div>
  );
}

function CheckGroupView({ capability, checks }: { capability: string | null; checks: ContractReport["checks"] }) {
  const title = capability ?? "The provider as a whole";
  return (
    <section className="contract-group" aria-label={title}>
      <h5 className="contract-group-title">{capability ? <code>{capability}</code> : title}</h5>
      <ul className="contract-checks">
        {checks.map((c, i) => (
          <li key={`${c.rule}-${c.name}-${i}`} className={`contract-check ${c.passed ? "check-passed" : "check-failed"}`}>
            <Icon name={c.passed ? "check" : "xCircle"} size={15} className="contract-check-icon" />
            <span className="contract-check-body">
              <span className="contract-check-name">
                {c.passed ? <span className="sr-only">Passed: </span> : <strong>Failed: </strong>}
                {c.name}
              </span>
              <code className="contract-rule">{c.rule}</code>
              {c.detail ? <span className="contract-detail">{c.detail}</span> : null}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** "30 passed checks of 3 capabilities and the provider as a whole". */
function foldedSummary(groups: { capability: string | null; checks: unknown[] }[]): string {
  const checks = groups.reduce((n, g) => n + g.checks.length, 0);
  const named = groups.filter((g) => g.capability !== null).length;
  const parts = named > 0 ? [`${named} capabilit${named === 1 ? "y" : "ies"}`] : [];
  if (groups.some((g) => g.capability === null)) parts.push("the provider as a whole");
  return `${checks} passed check${checks === 1 ? "" : "s"} of ${parts.join(" and ")}`;
}
