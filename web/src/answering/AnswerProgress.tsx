// The parts every pending-request card shows around its own controls: the answer on its way,
// a failed answer with Retry, and — once over — why this person's answer was not recorded.

import { Banner, Button, Icon } from "../ui";
import type { AnswerPhase } from "./useAnswerOnce";
import "./card.css";

export function AnswerProgress<Answer>({ phase, retry }: { phase: AnswerPhase<Answer>; retry: () => void }) {
  return (
    <>
      <div aria-live="polite" className="icard-status">
        {phase.kind === "submitting" ? (
          <p className="icard-submitting">
            <Icon name="send" size={14} /> Submitting your answer…
          </p>
        ) : null}
      </div>
      {phase.kind === "failed" ? (
        <Banner
          tone="danger"
          live="assertive"
          title="Your answer was not sent"
          action={
            <Button size="sm" onClick={retry}>
              Retry
            </Button>
          }
        >
          {phase.error.message}
        </Banner>
      ) : null}
    </>
  );
}

export function ConflictNote({ conflict }: { conflict: string | null }) {
  if (!conflict) return null;
  return (
    <p className="outcome-conflict">
      <Icon name="info" size={16} /> Your answer was not recorded: {conflict}
    </p>
  );
}
