// LineUp's service worker (issue 6): the app shell offline, the inbox's last answers, Web Push.
// Hand-written on purpose: a few clear rules instead of a framework.
//   - navigations: network first; offline, the cached shell (index.html)
//   - /assets/* (hashed, immutable) and icons: cache first
//   - the few GETs the inbox needs: network first, the last good answer when offline
//   - push: show the notification unless the person is looking at that very card
const VERSION = "lineup-v1";
const SHELL = `${VERSION}-shell`;
const API = `${VERSION}-api`;
const API_CACHED = [
  /^\/api\/auth\/me$/,
  /^\/api\/notifications$/,
  /^\/api\/workspaces\/[^/]+\/(inbox|agents|members)$/,
  /^\/api\/workspaces\/[^/]+\/tasks$/,
  /^\/api\/workspaces\/[^/]+\/events$/,
  /^\/api\/workspaces\/[^/]+\/interactions\/[^/]+$/,
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL);
      const html = await (await fetch("/index.html", { cache: "no-store" })).text();
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
      await cache.put("/index.html", new Response(html, { headers: { "Content-Type": "text/html" } }));
      await cache.addAll(["/manifest.webmanifest", "/theme.js", "/icon.svg", "/icons/icon-192.png", ...assets]);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) if (!key.startsWith(VERSION)) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin) return;
  if (event.request.method !== "GET") {
    // Signing out forgets what this device kept of the account.
    if (url.pathname === "/api/auth/signout") event.waitUntil(caches.delete(API));
    return;
  }
  if (event.request.mode === "navigate") {
    event.respondWith(fetch(event.request).catch(async () => (await caches.match("/index.html")) ?? Response.error()));
  } else if (url.pathname === "/theme.js") {
    event.respondWith(fetch(event.request).catch(async () => (await caches.match("/theme.js")) ?? Response.error()));
  } else if (url.pathname.startsWith("/assets/") || url.pathname.startsWith("/icons/")) {
    event.respondWith(
      caches.match(event.request).then(
        (hit) =>
          hit ??
          fetch(event.request).then(async (response) => {
            if (response.ok) await (await caches.open(SHELL)).put(event.request, response.clone());
            return response;
          }),
      ),
    );
  } else if (API_CACHED.some((re) => re.test(url.pathname))) {
    event.respondWith(
      fetch(event.request)
        .then(async (response) => {
          if (response.ok) await (await caches.open(API)).put(event.request, response.clone());
          else if (response.status === 401) await caches.delete(API);
          return response;
        })
        .catch(async () => (await caches.match(event.request, { cacheName: API })) ?? Response.error()),
    );
  }
});

// Ask an open, visible page whether it shows this card right now.
async function lookingAt(data) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const visible = windows.filter((c) => c.visibilityState === "visible" && c.focused);
  const answers = visible.map(
    (client) =>
      new Promise((resolve) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = (e) => resolve(e.data === true);
        client.postMessage({ type: "lineup.showing", url: data.url, subjectId: data.subjectId }, [channel.port2]);
        setTimeout(() => resolve(false), 500);
      }),
  );
  return (await Promise.all(answers)).some(Boolean);
}

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: "LineUp", body: event.data ? event.data.text() : "" };
  }
  event.waitUntil(
    (async () => {
      if (data.url && (await lookingAt(data))) return;
      await self.registration.showNotification(data.title || "LineUp", {
        body: data.body || "",
        tag: data.tag,
        icon: "/icons/icon-192.png",
        badge: "/icons/icon-192.png",
        data: { url: data.url || "/inbox" },
      });
    })(),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL(event.notification.data?.url || "/inbox", self.location.origin).href;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      for (const client of windows) {
        if ("focus" in client) {
          await client.focus();
          client.postMessage({ type: "lineup.open", url: target });
          return;
        }
      }
      await self.clients.openWindow(target);
    })(),
  );
});
