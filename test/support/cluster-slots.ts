/** Number of hash slots in a Redis Cluster. */
export const CLUSTER_SLOTS = 16384;

function crc16(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/** Hash slot of `key` (CRC16/XMODEM mod 16384, honouring the first non-empty `{hash tag}`). */
export function keySlot(key: string | Buffer): number {
  let bytes = Buffer.isBuffer(key) ? key : Buffer.from(key);
  const open = bytes.indexOf('{');
  if (open >= 0) {
    const close = bytes.indexOf('}', open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  return crc16(bytes) % CLUSTER_SLOTS;
}

/** One line of `CLUSTER NODES`. */
export interface ClusterNodeEntry {
  id: string;
  host: string;
  port: number;
  flags: string[];
  /** Node id of its master, for replicas; undefined for masters. */
  masterId?: string;
  linkState: string;
  /** Served slot ranges, inclusive. Importing/migrating markers are left out. */
  slots: Array<[number, number]>;
  isMaster: boolean;
  /** Flagged `fail` or `fail?` by the node that answered. */
  failing: boolean;
}

/** Parses the text of `CLUSTER NODES`. */
export function parseClusterNodes(text: string): ClusterNodeEntry[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [id, address, flagText, master, , , , linkState, ...slotTexts] = line.split(' ');
      const hostPort = address.split('@')[0];
      const colon = hostPort.lastIndexOf(':');
      const flags = flagText.split(',');
      const slots = slotTexts
        .filter((s) => !s.startsWith('['))
        .map((s): [number, number] => {
          const [from, to] = s.split('-').map(Number);
          return [from, to ?? from];
        });
      return {
        id,
        host: hostPort.slice(0, colon),
        port: Number(hostPort.slice(colon + 1)),
        flags,
        masterId: master === '-' ? undefined : master,
        linkState,
        slots,
        isMaster: flags.includes('master'),
        failing: flags.includes('fail') || flags.includes('fail?'),
      };
    });
}

/** The master serving `slot` among `entries` (preferring one not flagged failing), if any. */
export function ownerOfSlot(entries: ClusterNodeEntry[], slot: number): ClusterNodeEntry | undefined {
  const owners = entries.filter((e) => e.isMaster && e.slots.some(([a, b]) => slot >= a && slot <= b));
  return owners.find((e) => !e.failing) ?? owners[0];
}
