import { Client, fetchExchange, type Operation, subscriptionExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { createClient as createWebSocketClient } from 'graphql-ws';
import { OrderOne, PetsPage } from './documents.js';

/**
 * A small typed web client of the Petstore gateway: pets page by page with their stock, an order
 * button (with a token) on those that have stock. The page is a live query (`@live`): the gateway
 * sends it again whenever a write, from any client, changes what it shows. Operations
 * are sent by their id in the trusted-documents manifest, never as text, so it works against
 * TRUSTED_DOCUMENTS=require.
 *
 * Settings come from the page's address: ?gateway=http://127.0.0.1:4000&token=<bearer token>.
 */
const settings = new URLSearchParams(location.search);
const gateway = settings.get('gateway') ?? 'http://127.0.0.1:4000';
const token = settings.get('token');
const authorization: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};

/** The manifest id GraphQL Code Generator gave a document. */
const idOf = (document: unknown) => (document as { __meta__?: { hash?: string } }).__meta__?.hash ?? '';

const webSocket = createWebSocketClient({ url: `${gateway.replace(/^http/, 'ws')}/graphql`, connectionParams: authorization });

/** A query marked @live: answered over the WebSocket, as often as the gateway has news. */
const isLive = (operation: Operation) =>
  operation.kind === 'query' &&
  operation.query.definitions.some(
    (definition) =>
      definition.kind === 'OperationDefinition' &&
      definition.operation === 'query' &&
      definition.directives?.some((directive) => directive.name.value === 'live'),
  );

const client = new Client({
  url: `${gateway}/graphql`,
  fetchOptions: { headers: authorization },
  preferGetMethod: false,
  exchanges: [
    persistedExchange({ enforcePersistedQueries: true, enableForMutation: true, generateHash: async (_query, document) => idOf(document) }),
    subscriptionExchange({
      isSubscriptionOperation: (operation) => operation.kind === 'subscription' || isLive(operation),
      forwardSubscription: (request, operation) => ({
        subscribe: (sink) => ({
          // The id instead of the text, as over HTTP.
          unsubscribe: webSocket.subscribe(
            { query: '', variables: request.variables, extensions: { persistedQuery: { version: 1, sha256Hash: idOf(operation.query) } } },
            sink,
          ),
        }),
      }),
    }),
    fetchExchange,
  ],
});

const rows = document.querySelector<HTMLTableSectionElement>('#pets')!;
const status = document.querySelector<HTMLParagraphElement>('#status')!;
const next = document.querySelector<HTMLButtonElement>('#next')!;
const previous = document.querySelector<HTMLButtonElement>('#previous')!;
/** The cursors of the pages before the one shown. */
const cursors: Array<string | null> = [];
let current: string | null = null;
let endCursor: string | null = null;

function say(text: string, error = false) {
  status.textContent = text;
  status.className = error ? 'error' : '';
}

/**
 * A row's action: "Order 1" only while there is stock to order. The gateway refuses an order for a
 * sold pet, or one without stock, so the page does not offer what would only fail.
 */
function showAction(row: HTMLTableRowElement, quantity: number | undefined, petStatus: string) {
  const cell = row.querySelector('.action')!;
  if (petStatus !== 'SOLD' && quantity !== undefined && quantity > 0) {
    const order = document.createElement('button');
    order.textContent = 'Order 1';
    order.addEventListener('click', () => void placeOrder(row.dataset.pet!, row.dataset.name!));
    cell.replaceChildren(order);
  } else {
    cell.replaceChildren(petStatus === 'SOLD' ? 'Sold' : 'Out of stock');
  }
}

function showStock(petId: string, quantity: number | undefined, petStatus?: string) {
  const row = rows.querySelector<HTMLTableRowElement>(`tr[data-pet="${petId}"]`);
  if (!row) return;
  row.querySelector('.stock')!.textContent = quantity === undefined ? '—' : String(quantity);
  if (petStatus) row.querySelector('.status')!.textContent = petStatus;
  showAction(row, quantity, row.querySelector('.status')!.textContent ?? '');
}

/** The live page shown now; a new page ends it. */
let shown: { unsubscribe(): void } | undefined;

function load(after: string | null) {
  shown?.unsubscribe();
  let first = true;
  shown = client.query(PetsPage, { after }, { requestPolicy: 'network-only' }).subscribe((result) => {
    if (result.error || !result.data) return say(result.error?.message ?? 'No answer', true);
    render(after, result.data.pets, first);
    first = false;
  });
}

/** One answer of the live page: the first one when the page is opened, then each one a write brought. */
function render(after: string | null, pets: Parameters<typeof renderRows>[0], first: boolean) {
  current = after;
  endCursor = pets.pageInfo.endCursor ?? null;
  renderRows(pets);
  next.disabled = !pets.pageInfo.hasNextPage;
  previous.disabled = cursors.length === 0;
  // A later answer leaves what the page says (an order's confirmation) alone.
  if (first) say(`${pets.totalCount} pets; page ${cursors.length + 1}.`);
}

function renderRows(pets: {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
  nodes: Array<{ id: string; name: string; status?: string | null; inventory?: { quantity: number } | null }>;
}) {
  rows.replaceChildren(
    ...pets.nodes.map((pet) => {
      const row = document.createElement('tr');
      row.dataset.pet = pet.id;
      row.dataset.name = pet.name;
      row.append(
        Object.assign(document.createElement('td'), { textContent: pet.name }),
        Object.assign(document.createElement('td'), { textContent: pet.status ?? '', className: 'status' }),
        Object.assign(document.createElement('td'), { textContent: String(pet.inventory?.quantity ?? '—'), className: 'stock' }),
        Object.assign(document.createElement('td'), { className: 'action' }),
      );
      showAction(row, pet.inventory?.quantity, pet.status ?? '');
      return row;
    }),
  );
}

async function placeOrder(petId: string, name: string) {
  const result = await client.mutation(OrderOne, { petId }).toPromise();
  if (result.error || !result.data) return say(result.error?.message ?? 'No answer', true);
  const { pet } = result.data.placeOrder;
  showStock(pet.id, pet.inventory?.quantity, pet.status ?? undefined);
  say(`Ordered one ${name}: order ${result.data.placeOrder.id}.`);
}

next.addEventListener('click', () => {
  cursors.push(current);
  load(endCursor);
});
previous.addEventListener('click', () => load(cursors.pop() ?? null));

load(null);
