import { z } from 'zod';

export const fileConfigSchema = z
  .object({
    path: z.string({ error: 'required' }).min(1, { error: 'must not be empty' }),
    /** fsync after every write, so "accepted" means on disk. */
    fsync: z.boolean({ error: 'must be true or false' }),
  })
  .strict();

export type FileConfig = z.output<typeof fileConfigSchema>;

export function createDefaultConfig(): Partial<FileConfig> {
  return { fsync: false };
}
