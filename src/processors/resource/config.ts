import { z } from 'zod';
import { configErrorMap, forwardIssues } from '../../config/format-issues.js';
import { isPlainObject } from '../../shared/plain-object.js';

export const ACTIONS = ['insert', 'update', 'upsert', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];
export type AttributeScalar = string | number | boolean;

const scalar = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' });

const action = z
  .object({
    key: z.string({ error: 'required' }).min(1, { error: 'must not be empty' }),
    value: scalar.optional(),
    action: z.enum(ACTIONS, { error: `must be one of ${ACTIONS.join(', ')}` }),
  })
  .strict()
  .refine((a) => a.action === 'delete' || a.value !== undefined, { error: 'value is required unless action is delete', path: ['value'] });

export interface AttributeAction {
  key: string;
  value?: AttributeScalar | undefined;
  action: Action;
}

const mapForm = z.record(z.string().min(1, { error: 'an attribute key must not be empty' }), scalar);
const listForm = z.array(action);

/**
 * `attributes` is either a map (every key upserted, DESIGN section 4) or the
 * collector's list of `{key, value, action}`; both normalize to the list.
 * The form is chosen by shape first so that errors point inside it.
 */
export const resourceConfigSchema = z
  .object({
    attributes: z.unknown().transform(function normalize(value, ctx): AttributeAction[] {
      const list = Array.isArray(value);
      if (!list && !isPlainObject(value)) {
        ctx.addIssue({ code: 'custom', message: 'must be a mapping of keys to values, or a list of { key, value, action }' });
        return z.NEVER;
      }
      const parsed = list ? listForm.safeParse(value, { error: configErrorMap }) : mapForm.safeParse(value, { error: configErrorMap });
      if (!parsed.success) {
        forwardIssues(parsed.error.issues, ctx);
        return z.NEVER;
      }
      if (Array.isArray(parsed.data)) return parsed.data;
      return Object.entries(parsed.data).map(([key, v]) => ({ key, value: v, action: 'upsert' as const }));
    }),
  })
  .strict()
  .transform((config) => ({ actions: config.attributes }));

export type ResourceConfig = z.output<typeof resourceConfigSchema>;

export function createDefaultConfig(): { attributes: Record<string, never> } {
  return { attributes: {} };
}
