import { ERROR_STATUS, type ErrorCode } from './error-codes';

export interface Finding {
  field: string;
  message: string;
}

/** The one exception type of the service: a contract error code, findings and extra detail. */
export class BillingException extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly findings: Finding[] = [],
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'BillingException';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): { error: Record<string, unknown> } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.findings.length > 0 ? { findings: this.findings } : {}),
        ...this.details,
      },
    };
  }

  static invalid(findings: Finding[], message = 'The request is invalid'): BillingException {
    return new BillingException('DL_BILLING_REQUEST_INVALID', message, findings);
  }

  static notFound(what: string): BillingException {
    return new BillingException('DL_BILLING_NOT_FOUND', `${what} not found`);
  }
}
