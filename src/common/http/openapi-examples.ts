// Recorded from the HTTP tests' real responses (RECORD_EXAMPLES=1 npx vitest run --project http); do not edit by hand.
export const RECORDED_EXAMPLES: Record<string, unknown> = {};
