// receivers.gateway.models: one catalog entry as DESIGN section 4 names its
// keys. The catalog is built from these, so they sit below the receiver's
// config, which lists them under `models`.
import { z } from 'zod';
import { parseUsd } from '../../../shared/money.js';
import { PRICE_KINDS, type PriceKind } from '../../../usage/pricing.js';

const price = z.string().refine(
  function isPrice(text) {
    try {
      parseUsd(text);
      return true;
    } catch {
      return false;
    }
  },
  { error: 'must be a decimal string like "0.000003" (USD per token, at most 15 decimal places)' },
);

/** USD per token for each kind of token; the cache prices default to the input price. */
const pricingSchema = z.strictObject(Object.fromEntries(PRICE_KINDS.map((kind) => [kind, price.optional()])) as Record<PriceKind, z.ZodOptional<typeof price>>);

export const modelSchema = z.strictObject({
  id: z.string().regex(/^[^/\s]+\/\S+$/, 'must look like <provider>/<model>'),
  name: z.string().optional(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
  owned_by: z.string().optional(),
  created: z.number().int().nonnegative().optional(),
  context_window: z.number().int().positive().optional(),
  max_tokens: z.number().int().positive().optional(),
  /** What the model does: chat (`language`) or `embedding`; each is served only on its own routes. */
  type: z.enum(['language', 'embedding']).default('language'),
  pricing: pricingSchema.optional(),
  endpoints: z.array(z.strictObject({ provider: z.string().min(1), model: z.string().min(1), pricing: pricingSchema.optional() })).min(1, 'must list at least one endpoint'),
});

export type ModelConfig = z.output<typeof modelSchema>;
