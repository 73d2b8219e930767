/**
 * The catalog's composition: plans and their prices (meters checked against the
 * ingestion-aggregator), features and the plans' entitlements to them (ADR 0061: the check
 * itself is the entitlements service's; billing keeps no check cache).
 */
import type { Meters } from '../clients/meters/domain';
import { EntitlementService } from '../entitlements/service';
import { FeatureService } from '../features/service';
import { PlanService } from '../plans/service';
import { MeterCheck } from '../prices/new-price';
import { PriceService } from '../prices/service';
import { TaxRateRefs } from '../taxes/refs';
import { TaxRateService } from '../taxes/service';
import { TaxRateStore } from '../taxes/store';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';

export interface Catalog {
  plans: PlanService;
  prices: PriceService;
  features: FeatureService;
  entitlements: EntitlementService;
  taxRates: TaxRateService;
}

export function composeCatalog({ db, clock, published }: CompositionBase, { stores, meters }: { stores: BillingStores; meters: Meters }): Catalog {
  const meterCheck = new MeterCheck(meters);
  const taxRateStore = new TaxRateStore();
  const taxRates = new TaxRateRefs(taxRateStore);
  return {
    plans: new PlanService({ db, plans: stores.plans, prices: stores.prices, meters: meterCheck, taxRates, clock }),
    prices: new PriceService({ db, plans: stores.plans, prices: stores.prices, meters: meterCheck, taxRates, clock }),
    features: new FeatureService({ db, features: stores.features, meters: meterCheck, clock, published }),
    entitlements: new EntitlementService({ db, plans: stores.plans, features: stores.features, entitlements: stores.entitlements, clock, published }),
    taxRates: new TaxRateService(db, taxRateStore, clock),
  };
}
