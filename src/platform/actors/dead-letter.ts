// The value of a dead-letters message (schemas/dead-letter.avsc).
export interface DeadLetter {
  workerKind: string;
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: Buffer | null;
  error: string;
  errorStack: string | null;
  attempts: number;
  failedAt: number;
}
