// Which endpoints a request tries, in order (DESIGN 7, issue 5 item 4):
// the requested model's endpoints, then each fallback model's; `only` filters,
// `order` moves the listed slugs first in its order, the rest keep theirs.
import type { Catalog, Endpoint, ModelType } from './catalog.js';
import { GatewayHttpError } from './http-error.js';

export interface RoutingOptions {
  order: readonly string[] | undefined;
  only: readonly string[] | undefined;
  models: readonly string[] | undefined;
}

export interface Router {
  /** `type`: what the route serves; a catalog model of the other type, asked for or as a fallback, is a 400. */
  plan(model: string, options: RoutingOptions, optionsParam: string, type: ModelType): Endpoint[];
}

/**
 * No model id names anything with a control character in it, and ids are
 * written into usage records and report keys, where one could pass for a
 * separator: such an id is the client's mistake, named by where it was.
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

export function createRouter(catalog: Catalog, providerSlugs: ReadonlySet<string>): Router {
  function resolve(model: string, param: string, type: ModelType): readonly Endpoint[] {
    if (CONTROL_CHARACTER.test(model)) {
      throw new GatewayHttpError(400, `${param}: a model id must not contain control characters (${JSON.stringify(model)})`, { code: 'invalid_value', param });
    }
    const listed = catalog.endpoints(model);
    const listedType = catalog.typeOf(model);
    if (listedType !== undefined && listedType !== type) {
      throw new GatewayHttpError(400, `${param}: the model \`${model}\` is ${article(listedType)} ${listedType} model, not ${article(type)} ${type} model.`, { code: 'wrong_model_type', param });
    }
    if (listed !== undefined) return listed;
    const slash = model.indexOf('/');
    const slug = slash > 0 ? model.slice(0, slash) : '';
    if (slash > 0 && slash < model.length - 1 && providerSlugs.has(slug)) {
      const upstream = model.slice(slash + 1);
      return [{ modelId: model, provider: slug, model: upstream, maxTokens: undefined, prices: catalog.upstreamPrices(slug, upstream), unlisted: true }];
    }
    throw new GatewayHttpError(404, `The model \`${model}\` does not exist or you do not have access to it.`, { code: 'model_not_found', param });
  }

  function arrange(endpoints: readonly Endpoint[], options: RoutingOptions): Endpoint[] {
    const only = options.only;
    const allowed = only === undefined ? endpoints : endpoints.filter((e) => only.includes(e.provider));
    const order = options.order;
    if (order === undefined || order.length === 0) return [...allowed];
    const rank = (e: Endpoint): number => {
      const i = order.indexOf(e.provider);
      return i === -1 ? order.length : i;
    };
    // Array.prototype.sort is stable, so unlisted endpoints keep their catalog order.
    return [...allowed].sort((a, b) => rank(a) - rank(b));
  }

  return {
    plan: function plan(model, options, optionsParam, type) {
      const planned = arrange(resolve(model, 'model', type), options);
      options.models?.forEach(function addFallback(fallback, i) {
        for (const endpoint of arrange(resolve(fallback, join(optionsParam, `models[${i}]`), type), options)) {
          // An endpoint that already failed in this plan is not tried again.
          if (!planned.some((e) => e.provider === endpoint.provider && e.model === endpoint.model)) planned.push(endpoint);
        }
      });
      if (planned.length === 0) {
        throw new GatewayHttpError(400, `No configured provider can serve \`${model}\` within ${join(optionsParam, 'only')}.`, { code: 'no_provider_available', param: join(optionsParam, 'only') });
      }
      return planned;
    },
  };
}

function article(type: ModelType): string {
  return type === 'embedding' ? 'an' : 'a';
}

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}
