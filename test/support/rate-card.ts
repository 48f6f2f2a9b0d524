import { BillingException, type Finding } from '../../src/common/errors/billing.exception';
import { parseRateCard, type RateCardVersion } from '../../src/pricing/rate-card';

/** Size-class resources and approved bases as config/rate-card.json ships them. */
export const TEST_RESOURCES = {
  small: { cpu: 1, memoryGi: 1, diskGi: 10 },
  medium: { cpu: 2, memoryGi: 4, diskGi: 20 },
  large: { cpu: 7, memoryGi: 30, diskGi: 50 },
  'gpu-small': { cpu: 8, memoryGi: 32, diskGi: 100 },
  'gpu-large': { cpu: 32, memoryGi: 128, diskGi: 200 },
};
export const TEST_BASES = { 'datalayer/python-cpu': { cuda: null }, 'datalayer/python-cuda:2026.09': { cuda: '12.8' } };

/** A rate card of one version, with GPUs on modal and daytona. */
export const testCard: RateCardVersion = parseRateCard({
  bases: TEST_BASES,
  versions: [
    {
      version: 'test-1',
      effectiveFrom: '2026-01-01T00:00:00Z',
      sizeClasses: { small: '1.000000', medium: '2.000000', large: '7.000000', 'gpu-small': '10.000000', 'gpu-large': '20.000000' },
      resources: TEST_RESOURCES,
      variants: ['datalayer', 'e2b', 'modal', 'daytona'],
      accelerators: {
        modal: { T4: '6.000000', H100: '40.000000', 'A100-80GB': '25.500000' },
        daytona: { H100: '38.000000', 'RTX-4090': '7.000000' },
      },
    },
  ],
})[0]!;

/** The refusal of `fn` (which must throw a BillingException): its code, status, findings and error-level detail. */
export function refusalOf(fn: () => unknown): {
  code: string;
  status: number;
  findings: (Finding & { specCode?: string })[];
  details: Record<string, unknown>;
} {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof BillingException)) throw error;
    return { code: error.code, status: error.status, findings: error.findings, details: error.details };
  }
  throw new Error('expected a refusal');
}
