import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { DEMO_TOKENS, type Simulator, type SimulatorOptions, startSimulator } from '../simulator/server.js';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';

export interface ServiceWorld {
  sim: Simulator;
  service: ServiceClient;
  close(): Promise<void>;
}

export async function startServiceWorld(options: SimulatorOptions = {}): Promise<ServiceWorld> {
  const sim = await startSimulator(options);
  const service = new ServiceClient({
    baseUrl: sim.baseUrl,
    tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
  });
  return {
    sim,
    service,
    async close() {
      await service.close();
      await sim.close();
    },
  };
}

/** A budget gate with the spec's limits, except the ones given. */
export function budgetWith(limits: Partial<Record<BudgetedEndpoint, number>> = {}, tenant = 't1'): InMemoryBudgetGate {
  return new InMemoryBudgetGate(
    { ...SPEC_BUDGET_SETTINGS, limits: { ...SPEC_BUDGET_SETTINGS.limits, ...limits } },
    Date.now,
    tenant,
  );
}
