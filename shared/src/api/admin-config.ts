/** Wire types of /admin/config/{export,schema,plan,apply}. */
import type { ConfigDocument } from './config.js';

export interface ConfigProblem {
  path: string;
  message: string;
}

export interface ConfigChange {
  section: string;
  /** The section itself, or the name/id of a list item. */
  target: string;
  action: 'create' | 'update' | 'delete';
  /** Changed fields, relative to the target. */
  fields: string[];
}

export interface ConfigRisk {
  level: 'high';
  code: string;
  path: string;
  message: string;
}

export interface ConfigPlan {
  valid: true;
  changes: ConfigChange[];
  risks: ConfigRisk[];
  /** Settings that take effect only when the server restarts. */
  restart_required: string[];
  /** Ids of loaded models whose load settings change: they keep the old ones until they are loaded again. */
  reload_required: string[];
  /** Old spellings of renamed keys in the document, each naming its new key. */
  warnings: string[];
}

export interface PlanRequest {
  document: Partial<ConfigDocument> & { version: 1 };
  prune?: boolean;
}

export interface ApplyRequest extends PlanRequest {
  confirm_high_risk?: boolean;
}

export interface ApplyResult extends ConfigPlan {
  applied: true;
}
