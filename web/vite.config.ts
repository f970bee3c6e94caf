/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The hub serves the built app from the Python package (src/lineup/hub/static, gitignored).
// `npm run dev` proxies the API and the WebSocket to a hub on :8000.
const hub = process.env.LINEUP_HUB ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: "../src/lineup/hub/static",
    emptyOutDir: true,
    sourcemap: false,
    target: "es2022",
  },
  server: {
    proxy: {
      "/api": hub,
      "/ws": { target: hub.replace(/^http/, "ws"), ws: true },
      "/readyz": hub,
    },
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
    restoreMocks: true,
  },
});
