// providerOptions.gateway, as every protocol's request carries it: the
// routing options of DESIGN section 7 (order, only, models).
import { z } from 'zod';

/**
 * The most entries a routing list takes. Real lists name a few providers or
 * fallback models; the bound keeps one request from planning thousands of
 * attempts (each fallback model adds its endpoints to the plan).
 */
export const MAX_ROUTING_ENTRIES = 32;

export const slugList = z.array(z.string().min(1)).max(MAX_ROUTING_ENTRIES);

export const gatewayOptionsSchema = z.object({ order: slugList.optional(), only: slugList.optional(), models: slugList.optional() });
