// A node's identity as an A2A AgentCard (seed 000 D6, issue 14 §7): name, description, the
// node's public keys, how to reach it (its inbox directory on this bus) and whether attend
// sees it as a Claude Code session or an external node (a person, another agent).

import type { AgentCard } from '@a2a-js/sdk';
import { pathToFileURL } from 'node:url';
import { attendKey } from '../../wire/names.js';
import { localAnchor } from './anchors.js';
import { scopeDir } from '../store/layout.js';
import { readLineage } from './lineage.js';

interface CardNode {
  id: string;
  kind: 'agent' | 'human';
  name: string;
  origin: string;
  /** A Claude Code session (it has a session record); other agents and people are external. */
  claude: boolean;
}

/** The extension that carries attend's node fields; readers that do not know it ignore it. */
const NODE_EXTENSION = 'urn:attend:node:v1';

export function cardFor(root: string, node: CardNode, version = '0.1.0'): AgentCard {
  const claude = node.claude;
  const inbox = node.kind === 'agent' ? scopeDir(root, { kind: 'tray', key: attendKey(node.origin) }) : scopeDir(root, { kind: 'open' });
  const keys = localAnchor(root, node.id).keys;
  const parent = readLineage(root).parentOf(node.id) ?? null;
  return {
    name: node.name,
    description: claude
      ? `Claude Code session ${node.id} working in ${node.origin}`
      : node.kind === 'agent'
        ? `${node.name}, an agent that is not Claude Code, on this attend bus (external node)`
        : `${node.name}, a person on this attend bus (external node)`,
    supportedInterfaces: [{ url: pathToFileURL(inbox).href, protocolBinding: 'attend-filesystem', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version,
    capabilities: {
      streaming: false,
      pushNotifications: node.kind === 'agent',
      extensions: [
        {
          uri: NODE_EXTENSION,
          description: 'attend node identity: id, kind, lineage and Ed25519 public keys (NATS nkey text form); reach it with attend send --to <id>',
          required: false,
          params: {
            id: node.id,
            node_kind: claude ? 'claude-code' : 'external',
            from_kind: node.kind,
            parent,
            public_keys: keys.map((k) => k.keyId),
            current_key: keys.at(-1)?.keyId ?? null,
            send: `attend send --to ${node.id} "<message>"`,
          },
        },
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}
