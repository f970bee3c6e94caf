// The ui kit's styles, in cascade order: a later sheet may refine an earlier one.
import "./buttons.css";
import "./pills.css";
import "./cards.css";
import "./forms.css";
import "./progress.css";
import "./drawer.css";
import "./tabs.css";

export { Icon, type IconName } from "./Icon";
export { Button, type ButtonProps } from "./Button";
export { RejectForm } from "./RejectForm";
export { Spinner, Loading } from "./Spinner";
export { Card } from "./Card";
export { Badge, CountBadge } from "./Badge";
export { EmptyState } from "./EmptyState";
export { Banner, ErrorBanner } from "./Banner";
export { ProgressBar } from "./ProgressBar";
export {
  StatusPill,
  TaskStatusPill,
  AgentStatusPill,
  InteractionStatusPill,
  RiskPill,
  TASK_STATUS,
  taskStatusLabel,
  isTaskStatus,
  agentState,
  type Tone,
} from "./StatusPill";
export { Drawer, useFocusTrap } from "./Drawer";
export { CopyButton, copyText } from "./CopyButton";
export { RelativeTime } from "./RelativeTime";
export { Tabs, type TabItem } from "./Tabs";
