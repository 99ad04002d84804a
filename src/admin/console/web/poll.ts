// Loads an API resource now and again every `intervalMs` while the screen is shown.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, READ_TIMEOUT_MS, storedKey } from './api.js';

export function usePolled<T>(path: string, intervalMs: number, onUnauthorized: () => void): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(
    function poll() {
      let live = true;
      let loading = false;
      async function load() {
        // One load at a time: a slow answer is waited for, not joined by more that could land out of order.
        if (loading) return;
        loading = true;
        try {
          const value = await api<T>('GET', path, undefined, storedKey(), READ_TIMEOUT_MS);
          if (!live) return;
          setData(value);
          setError(null);
        } catch (err) {
          if (!live) return;
          if (err instanceof ApiError && err.status === 401) return onUnauthorized();
          setError(err instanceof Error ? err.message : String(err));
        } finally {
          loading = false;
        }
      }
      void load();
      const timer = setInterval(() => void load(), intervalMs);
      return () => {
        live = false;
        clearInterval(timer);
      };
    },
    [path, intervalMs, tick],
  );
  return { data, error, reload: () => setTick((n) => n + 1) };
}
