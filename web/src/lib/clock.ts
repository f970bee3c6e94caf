// One clock for every "… ago" on screen: a single timer that runs only while a time is shown.

type Listener = () => void;

const listeners = new Set<Listener>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | null = null;

function tick(): void {
  now = Date.now();
  for (const listener of listeners) listener();
}

export function subscribeClock(listener: Listener): () => void {
  if (timer === null) {
    now = Date.now();
    timer = setInterval(tick, 1000);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function clockNow(): number {
  return now;
}
