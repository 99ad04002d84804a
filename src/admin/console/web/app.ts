// Sign-in, navigation and the three screens. The screen is the URL's hash
// (#/drains, #/gateway, #/pipeline) so links, back and reload work.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, READ_TIMEOUT_MS, storedKey, storeKey } from './api.js';
import { DrainsScreen } from './drains.js';
import { focusHeading } from './focus.js';
import { GatewayScreen } from './gateway.js';
import { PipelineScreen } from './pipeline.js';

const SCREENS = [
  { hash: '#/drains', label: 'Drains' },
  { hash: '#/gateway', label: 'Gateway' },
  { hash: '#/pipeline', label: 'Pipeline' },
] as const;

function currentHash(): string {
  return SCREENS.some((screen) => screen.hash === location.hash) ? location.hash : '#/drains';
}

/** A character no HTTP header value can carry (what Node's validateHeaderValue refuses). */
const NOT_HEADER_TEXT = /[^\t\x20-\x7e\x80-\xff]/;

function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(notice);
  const [busy, setBusy] = useState(false);
  const keyInput = useRef<HTMLInputElement>(null);
  // Shown at load or after a sign-out, the screen's one field takes the keyboard.
  useEffect(function focusKey() {
    keyInput.current?.focus();
  }, []);
  async function submit(event: Event) {
    event.preventDefault();
    // The config refuses such a key (no header can carry it), and fetch would throw before asking the daemon.
    if (NOT_HEADER_TEXT.test(key)) {
      setError('The admin key was refused: it holds a character no admin key can have (a control character, or one beyond Latin-1: check the keyboard layout).');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api('GET', '/v1/stats', undefined, key, READ_TIMEOUT_MS);
      storeKey(key);
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError(`The admin key was refused: ${err.message}.`);
      else if (err instanceof ApiError) setError(`The admin endpoint answered: ${err.message}`);
      else setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }
  return html`
    <main class="sign-in">
      <h1>Sluice console</h1>
      <form onSubmit=${submit}>
        <label for="admin-key">Admin key</label>
        <input id="admin-key" ref=${keyInput} type="password" autocomplete="current-password" required value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} aria-describedby="sign-in-help${error === null ? '' : ' sign-in-error'}" />
        <p id="sign-in-help" class="hint">The <code>service.admin.api_key</code> of this daemon. It is kept in this tab only and forgotten when the tab closes.</p>
        ${error === null ? null : html`<p id="sign-in-error" class="error" role="alert">${error}</p>`}
        <button type="submit" disabled=${busy}>Sign in</button>
      </form>
    </main>
  `;
}

export function App() {
  const [signedIn, setSignedIn] = useState(storedKey() !== null);
  const [signedOutBecause, setSignedOutBecause] = useState<string | null>(null);
  const [hash, setHash] = useState(currentHash());
  // Each follow of a link to the screen already shown starts that screen afresh (a drain form on Drains closes):
  // the address does not change, so no hashchange would say so.
  const [visit, setVisit] = useState(0);
  useEffect(function followHash() {
    const onHash = () => {
      setHash(currentHash());
      // Screen readers and keyboards land on the new screen's heading, not on the link left behind.
      requestAnimationFrame(focusHeading);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  function signedInNow() {
    setSignedIn(true);
    requestAnimationFrame(focusHeading);
  }
  if (!signedIn) return html`<${SignIn} onSignedIn=${signedInNow} notice=${signedOutBecause} />`;
  function signOut(because: string | null = null) {
    storeKey(null);
    setSignedOutBecause(because);
    setSignedIn(false);
  }
  function revisit(to: string) {
    if (to !== hash) return;
    setVisit((n) => n + 1);
    requestAnimationFrame(focusHeading);
  }
  // A key refused later (rotated on reload) sends the user back to sign in, saying why.
  function onUnauthorized() {
    signOut('The admin key stopped working (was it changed by a reload?). Sign in with the current key.');
  }
  return html`
    <header class="top">
      <span class="brand">Sluice</span>
      <nav aria-label="Console">
        ${SCREENS.map((screen) => html`<a href=${screen.hash} aria-current=${screen.hash === hash ? 'page' : undefined} onClick=${() => revisit(screen.hash)}>${screen.label}</a>`)}
      </nav>
      <button type="button" class="link" onClick=${() => signOut()}>Sign out</button>
    </header>
    <main>
      ${hash === '#/gateway'
        ? html`<${GatewayScreen} key=${visit} onUnauthorized=${onUnauthorized} />`
        : hash === '#/pipeline'
          ? html`<${PipelineScreen} key=${visit} onUnauthorized=${onUnauthorized} />`
          : html`<${DrainsScreen} key=${visit} onUnauthorized=${onUnauthorized} />`}
    </main>
  `;
}
