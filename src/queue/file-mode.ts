// Queued spans may carry prompts and answers: the queue's files and folders
// are their owner's only, as the `file` exporter's are.
export const FILE_MODE = 0o600;
export const DIRECTORY_MODE = 0o700;
