// Module resolve hook for the Portkey child process. @portkey-ai/gateway 1.15.2
// ships its own nested @hono/node-server (1.19.x), which fails every streamed
// request ("TypeError: immutable", Portkey issue #1389); the top-level
// @hono/node-server is pinned to 1.14.1 but Node resolves the nested copy
// first. This sends that one specifier to the project root's copy instead.
const PROJECT_ROOT = new URL('../../../package.json', import.meta.url).href;
const REDIRECTED = '@hono/node-server';

interface ResolveContext {
  parentURL?: string | undefined;
  conditions: string[];
  importAttributes: Record<string, string>;
}
interface ResolveResult {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean | undefined;
}
type NextResolve = (specifier: string, context?: ResolveContext) => ResolveResult | Promise<ResolveResult>;

export async function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): Promise<ResolveResult> {
  if (specifier === REDIRECTED || specifier.startsWith(`${REDIRECTED}/`)) return nextResolve(specifier, { ...context, parentURL: PROJECT_ROOT });
  return nextResolve(specifier, context);
}
