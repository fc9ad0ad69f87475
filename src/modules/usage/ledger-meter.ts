// The meter every model call runs through (models/metering.ts): before the call, the budgets on
// its path reserve its worst case (the budgets module; none by default); after it, its cost is
// computed from the model's prices, the reservation settled to it, and its record appended to the
// ledger. One record per call, whatever the outcome.
import type { ModelDefinition } from '../../config/config.js';
import { newTimeOrderedId } from '../../ids.js';
import { isoTime } from '../../iso-time.js';
import {
  costMicros,
  type CallAttribution,
  type CallEnd,
  type MeteredUsage,
  type MeterStart,
  type MeterTicket,
  type UsageMeter,
} from '../../models/metering.js';
import type { UsageLedger } from './usage-ledger.js';
import type { UsageRecord } from './usage-records.repository.js';

/** A reservation on the budgets of one call, settled once to the call's cost. */
export interface BudgetReservation {
  settle(costMicros: number): void;
}

/** The budgets on a call's path: reserved before it (a refusal throws), settled after it. */
export interface BudgetGate {
  reserve(call: {
    attribution: CallAttribution;
    definition: ModelDefinition;
    worstCase: () => Promise<MeteredUsage>;
  }): Promise<BudgetReservation | null>;
}

export const noBudgets: BudgetGate = { reserve: () => Promise.resolve(null) };

/** Told of each record (the Prometheus counters of cost and tokens). */
export interface UsageObserver {
  usageRecorded(record: UsageRecord): void;
}

export interface LedgerMeterOptions {
  ledger: Pick<UsageLedger, 'append'>;
  budgets?: BudgetGate;
  observer?: UsageObserver;
  now?: () => number;
}

export class LedgerMeter implements UsageMeter {
  private readonly budgets: BudgetGate;
  private readonly now: () => number;

  constructor(private readonly options: LedgerMeterOptions) {
    this.budgets = options.budgets ?? noBudgets;
    this.now = options.now ?? Date.now;
  }

  async start({ definition, attribution, worstCase }: MeterStart): Promise<MeterTicket> {
    const reservation = await this.budgets.reserve({ attribution, definition, worstCase });
    let ended = false;
    return {
      end: (end) => {
        if (ended) return;
        ended = true;
        const record = this.recordOf(definition, attribution, end);
        reservation?.settle(record.costMicros ?? 0);
        this.options.ledger.append(record);
        this.options.observer?.usageRecorded(record);
      },
    };
  }

  private recordOf(
    definition: ModelDefinition,
    attribution: CallAttribution,
    end: CallEnd,
  ): UsageRecord {
    const nowMs = this.now();
    return {
      id: newTimeOrderedId('use', nowMs),
      accountId: attribution.accountId,
      apiKeyId: attribution.apiKeyId,
      endUser: attribution.endUser,
      route: attribution.route,
      model: definition.name,
      provider: definition.provider,
      deployment: end.deployment ?? null,
      executionId: attribution.executionId ?? null,
      usage: end.usage,
      status: end.status,
      errorCode: end.errorCode ?? null,
      latencyMs: end.latencyMs,
      cacheHit: end.cacheHit === true,
      costMicros: end.cacheHit === true ? 0 : costMicros(definition.pricing, end.usage),
      createdAt: isoTime(nowMs),
    };
  }
}
