// The banner of a task whose cancel was asked for: a countdown to the moment LineUp stops
// waiting for the agent, then, if it came to that, why LineUp ended the task itself.

import { useSyncExternalStore } from "react";
import type { Task } from "../../api/types";
import { clockNow, subscribeClock } from "../../lib/clock";
import { clockTime, fullTime } from "../../lib/time";
import { Banner } from "../../ui";
import { timeLeft, timeLeftWords } from "../governance/status";
import { cancelState } from "./cancel";

type CancelTask = Pick<Task, "status" | "cancelRequested" | "cancelDeadline" | "endCause">;

export function CancelBanner({ task }: { task: CancelTask }) {
  const now = useSyncExternalStore(subscribeClock, clockNow);
  const state = cancelState(task, now);
  switch (state.kind) {
    case "none":
      return null;
    case "ended_by_hub":
      return (
        <Banner tone="warning" icon="stopCircle" title="Cancelled by LineUp">
          The agent did not confirm the cancel in time, so LineUp marked the task cancelled. Anything the agent
          still reports for it is refused.
        </Banner>
      );
    case "due":
      return (
        <Banner tone="warning" icon="stopCircle" title="Cancel requested">
          The agent did not confirm by <time dateTime={state.deadline}>{clockTime(state.deadline)}</time>; LineUp is
          marking the task cancelled.
        </Banner>
      );
    case "pending":
      return (
        <Banner tone="warning" icon="stopCircle" title="Cancel requested">
          The agent has been asked to stop. The task ends when the agent confirms
          {state.deadline ? (
            <>
              {" "}— or in{" "}
              <span className="td-cancel-countdown" data-testid="cancel-countdown" aria-hidden="true">
                {timeLeft(state.msLeft)}
              </span>
              <span className="sr-only">{timeLeftWords(state.msLeft)}</span>, at{" "}
              <time dateTime={state.deadline} title={fullTime(state.deadline)}>
                {clockTime(state.deadline)}
              </time>
              , LineUp marks it cancelled if the agent has not.
            </>
          ) : (
            "."
          )}
        </Banner>
      );
  }
}
