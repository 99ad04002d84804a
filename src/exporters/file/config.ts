import { z } from 'zod';

/** The collector's file exporter rotation (lumberjack's settings and defaults). */
export const DEFAULT_ROTATION = { max_megabytes: 100, max_days: 0, max_backups: 100, localtime: false } as const;

const rotationSchema = z
  .object({
    /** The file's size, in MiB, past which it is moved aside and a new one begun. */
    max_megabytes: z.number({ error: 'must be a whole number of MiB' }).int({ error: 'must be a whole number of MiB' }).positive({ error: 'must be at least 1' }).default(DEFAULT_ROTATION.max_megabytes),
    /** Moved-aside files older than this many days (by the time in their name) are removed; 0 keeps them whatever their age. */
    max_days: z.number({ error: 'must be a whole number of days' }).int({ error: 'must be a whole number of days' }).nonnegative({ error: 'must not be negative' }).default(DEFAULT_ROTATION.max_days),
    /** The newest this many moved-aside files are kept; 0 keeps every one (unless max_days removes it). */
    max_backups: z.number({ error: 'must be a whole number' }).int({ error: 'must be a whole number' }).nonnegative({ error: 'must not be negative' }).default(DEFAULT_ROTATION.max_backups),
    /** Name moved-aside files after local time instead of UTC. */
    localtime: z.boolean({ error: 'must be true or false' }).default(DEFAULT_ROTATION.localtime),
  })
  .strict();

export const fileConfigSchema = z
  .object({
    path: z.string({ error: 'required' }).min(1, { error: 'must not be empty' }),
    /** fsync after every write, so "accepted" means on disk. */
    fsync: z.boolean({ error: 'must be true or false' }),
    /** Absent: one file that grows without end. */
    rotation: rotationSchema.optional(),
  })
  .strict();

export type FileConfig = z.output<typeof fileConfigSchema>;
export type RotationConfig = z.output<typeof rotationSchema>;

export function createDefaultConfig(): Partial<FileConfig> {
  return { fsync: false };
}
