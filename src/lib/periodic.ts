export interface Periodic {
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs` (the first run at once) until stopped; runs never overlap, and stop() waits
 * for one in progress. A failed run is reported to `onError` and retried at the next one.
 */
export function startPeriodic(task: () => Promise<unknown>, opts: { intervalMs: number; onError?: (err: unknown) => void }): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = task().then(
      () => undefined,
      (err: unknown) => opts.onError?.(err),
    ).finally(() => {
      // unref: a pending tick alone never keeps the process alive.
      if (!stopped) timer = setTimeout(tick, opts.intervalMs).unref();
    });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
