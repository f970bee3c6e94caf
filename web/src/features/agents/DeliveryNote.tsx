import type { Agent, Iso } from "../../api/types";
import { Icon } from "../../ui";
import { deliveryOf, deliveryText } from "./delivery";
import "./agents.css";

/** "Delivered to builder" or "Queued — delivered when builder reconnects", for something sent
 * on to an agent at ``sentAt``; nothing when the agent is unknown. */
export function DeliveryNote({
  sentAt,
  agent,
  as: Tag = "p",
}: {
  sentAt: Iso | null | undefined;
  agent: Agent | undefined;
  as?: "p" | "span";
}) {
  const delivery = deliveryOf(sentAt, agent);
  if (!delivery || !agent) return null;
  return (
    <Tag className={`delivery delivery-${delivery}`} data-delivery={delivery}>
      <Icon name={delivery === "delivered" ? "checkCircle" : "clock"} size={13} /> {deliveryText(delivery, agent.name)}
    </Tag>
  );
}
