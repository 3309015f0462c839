/**
 * How a change of each setting takes effect, in one table; the plan (plan.ts) reads it to say what a
 * change needs, and tests/companion/config/settings-table.test.ts walks it.
 *
 * - `live`: in force as soon as it is applied. Every consumer reads the configuration in force at
 *   each use (the `config()` getter of services.ts), or gets it from the one `configure(next)` step of
 *   services.ts `reconfigure`; never a value copied into a constructor.
 * - `reload`: in force for a local model the next time it is loaded; a loaded model keeps the value it
 *   was loaded with until it is unloaded and loaded again (the plan lists those models in `reload_required`).
 * - `restart`: read once when the listener or the process starts; in force after a restart
 *   (the plan lists the setting in `restart_required`).
 *
 * A key covers its whole subtree (`providers` is every field of every provider). The test fails
 * for a setting of the schema no key covers, a key that names no setting, and a `live` key whose
 * change shows no new behaviour after an apply.
 */
export type SettingEffect = 'live' | 'reload' | 'restart';

export const SETTINGS: Readonly<Record<string, SettingEffect>> = {
  // The listener's options and the route plugins' body limits are fixed when it starts.
  'server.host': 'restart',
  'server.port': 'restart',
  'server.body_limit_mb': 'restart',
  'server.auth.required': 'live',
  'server.cors.origins': 'live',
  'server.allowed_hosts': 'live',
  'server.limits.admin_body_kb': 'restart',
  'server.limits.tools_body_mb': 'restart',
  'server.limits.memory_body_mb': 'restart',
  'server.limits.images_body_mb': 'restart',
  'server.limits.request_timeout_seconds': 'restart',
  'server.limits.streams_per_key': 'live',
  'server.remote': 'restart',
  // Like the secure channel: the Ollama listener is opened (or not) when Hearth starts.
  'server.ollama': 'restart',
  'models.dirs': 'live',
  'models.external_sources': 'live',
  // The llama.cpp binding (with or without its GPU backend) is loaded once per process.
  'models.gpu': 'restart',
  // The engine is chosen, and the load settings are fixed, when a model is loaded.
  'models.engine': 'reload',
  // Off stops starting the native build and new loads use the quick build; auto starts it (if not built) at once.
  'models.native_build': 'live',
  'models.threads': 'reload',
  'models.context_size': 'reload',
  'models.parallel': 'reload',
  'models.queue_limit': 'reload',
  'models.idle_unload_seconds': 'reload',
  'models.overrides': 'reload',
  'models.remote_images': 'live',
  'models.memory_budget_mb': 'live',
  'models.slot_cache_mb': 'reload',
  memory: 'live',
  providers: 'live',
  agents: 'live',
  agents_defaults: 'live',
  'images.dirs': 'live',
  'images.hosted': 'live',
  mcp_services: 'live',
  media_providers: 'live',
  remote_hosts: 'live',
  cloud_workspaces: 'live',
};

/** The key of the table that covers a setting path (`server.limits.admin_body_kb`, `models.overrides.tiny.threads`), if one does. */
export function settingKey(path: string): string | undefined {
  for (let key = path; key; key = key.slice(0, Math.max(0, key.lastIndexOf('.')))) if (Object.hasOwn(SETTINGS, key)) return key;
  return undefined;
}

/** How a change of the setting at `path` takes effect; undefined for a path the table does not cover. */
export function effectOf(path: string): SettingEffect | undefined {
  const key = settingKey(path);
  return key === undefined ? undefined : SETTINGS[key];
}

/** The keys with one effect. */
export function settingsWith(effect: SettingEffect): string[] {
  return Object.keys(SETTINGS).filter((key) => SETTINGS[key] === effect);
}

/**
 * Every setting path of the document's JSON Schema: object properties are walked, and a list, a map
 * (additionalProperties) or a value is one setting (`providers`, `models.overrides`, `server.port`).
 * The document's `version` is no setting.
 */
export function schemaPaths(schema: object, prefix = ''): string[] {
  const properties = (schema as { properties?: Record<string, object> }).properties ?? {};
  return Object.entries(properties).flatMap(([key, child]) => {
    if (!prefix && key === 'version') return [];
    const path = prefix ? `${prefix}.${key}` : key;
    const inner = child as { type?: string; properties?: object };
    return inner.type === 'object' && inner.properties ? schemaPaths(child, path) : [path];
  });
}
