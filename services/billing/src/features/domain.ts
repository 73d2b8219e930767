import type { FeatureType } from '@billstream/contracts';

export type FeatureStatus = 'active' | 'archived';

export interface Feature {
  id: string;
  tenantId: string;
  environmentId: string;
  name: string;
  lookupKey: string;
  type: FeatureType;
  meterId: string | null;
  description: string | null;
  metadata: Record<string, string>;
  status: FeatureStatus;
  /** 1 at creation, +1 on every update or archive; the ETag is `"<version>"`. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface FeatureChanges {
  name?: string;
  description?: string | null;
  metadata?: Record<string, string>;
}

export interface FeatureListQuery {
  status?: FeatureStatus;
  type?: FeatureType;
  lookupKey?: string;
  limit: number;
  offset: number;
}
