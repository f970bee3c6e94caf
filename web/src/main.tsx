import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
// The tokens and the page's base come before every feature's own styles.
import "./styles/tokens.css";
import "./styles/base.css";
import { App } from "./app/App";
import { registerServiceWorker } from "./features/notifications/pwa";

// The installable app: offline shell, Web Push. Not in `npm run dev` (Vite's own
// module graph), only in the built app the hub serves.
if (import.meta.env.PROD) registerServiceWorker();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
