/** The names other modules import from here; the operations live in operations/, one per file. */
export { balanceJson, balanceNow, balanceOf } from './operations/balance';
export { createHoldOperation } from './operations/create-hold';
export { increaseHoldOperation } from './operations/increase-hold';
export { completeWrite, type Operation } from './operations/operation';
