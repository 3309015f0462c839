/** What the registry needs of a connection: a way to cut it, and word when it closes. */
export interface Connection {
  destroy(): void;
  once(event: 'close', listener: () => void): unknown;
}

/** Open connections per paired device, so revoking a device can cut them at once. */
export class DeviceConnections {
  private readonly open = new Map<string, Set<Connection>>();

  add(deviceId: string, connection: Connection): void {
    let set = this.open.get(deviceId);
    if (!set) this.open.set(deviceId, (set = new Set()));
    if (set.has(connection)) return;
    set.add(connection);
    connection.once('close', () => {
      set.delete(connection);
      if (set.size === 0 && this.open.get(deviceId) === set) this.open.delete(deviceId);
    });
  }

  count(deviceId: string): number {
    return this.open.get(deviceId)?.size ?? 0;
  }

  /** Destroys every open connection of the device; returns how many there were. */
  close(deviceId: string): number {
    const set = this.open.get(deviceId);
    if (!set) return 0;
    this.open.delete(deviceId);
    for (const connection of set) connection.destroy();
    return set.size;
  }
}
