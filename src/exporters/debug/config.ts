import { z } from 'zod';

export const VERBOSITIES = ['basic', 'normal', 'detailed'] as const;

export const debugConfigSchema = z
  .object({ verbosity: z.enum(VERBOSITIES, { error: `must be one of ${VERBOSITIES.join(', ')}` }) })
  .strict();

export type DebugConfig = z.output<typeof debugConfigSchema>;

export function createDefaultConfig(): DebugConfig {
  return { verbosity: 'basic' };
}
