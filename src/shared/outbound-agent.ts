// The connection pools of outbound requests (deliveries, upstream
// providers). When HTTPS_PROXY or HTTP_PROXY is set (either case), requests
// go through that proxy unless NO_PROXY exempts their host, as the
// collector's exporters do (Go's ProxyFromEnvironment); without them a
// plain Agent, which spares every request the proxy agent's look at its URL.
import { Agent, EnvHttpProxyAgent, type buildConnector, type Dispatcher } from 'undici';

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/** Whether the environment names a proxy for outbound requests. */
export function proxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return PROXY_VARIABLES.some((name) => (env[name] ?? '') !== '');
}

/** `options.connect` (a destination's CA, the connect timeout) applies to the destination, through a proxy as without one. */
export function outboundAgent(options: Agent.Options & { connect?: buildConnector.BuildOptions }): Dispatcher {
  if (!proxyConfigured()) return new Agent(options);
  // Through a proxy, undici reads the destination's TLS settings from requestTls.
  const agent = new EnvHttpProxyAgent({ ...options, ...(options.connect === undefined ? {} : { requestTls: options.connect }) });
  // The proxy agent adds a host header to the request's headers object, which callers may share and freeze.
  return agent.compose(function ownHeaders(dispatch) {
    return function dispatchWithOwnHeaders(opts, handler) {
      const { headers } = opts;
      return dispatch(headers === null || headers === undefined || Array.isArray(headers) ? opts : { ...opts, headers: { ...headers } }, handler);
    };
  });
}
