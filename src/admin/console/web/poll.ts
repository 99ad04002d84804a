// Loads an API resource now and again every `intervalMs` while the screen is shown.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';

export function usePolled<T>(path: string, intervalMs: number, onUnauthorized: () => void): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(
    function poll() {
      let live = true;
      async function load() {
        try {
          const value = await api<T>('GET', path);
          if (!live) return;
          setData(value);
          setError(null);
        } catch (err) {
          if (!live) return;
          if (err instanceof ApiError && err.status === 401) return onUnauthorized();
          setError(err instanceof Error ? err.message : String(err));
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
