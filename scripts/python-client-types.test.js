const fs = require('node:fs');
const path = require('node:path');
const { generate } = require('./python-client-types');

const DOCUMENT = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'docs', 'openapi.json'), 'utf8'));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operationsOf = (doc) => Object.values(doc.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m]));

describe('python-client-types', () => {
  it('gives every operation of docs/openapi.json a sync and an async method and a row of the table', () => {
    const { operations } = generate(DOCUMENT);
    const ids = operationsOf(DOCUMENT).map((o) => o.operationId);
    expect(ids.length).toBeGreaterThan(100);
    for (const id of ids) expect(operations).toContain(`    ${JSON.stringify(id)}: Operation(${JSON.stringify(id)}, `);
    const sync = operations.match(/^ {4}def (?!_call)\w+\(/gm) ?? [];
    const async = operations.match(/^ {4}async def (?!_call)\w+\(/gm) ?? [];
    expect(sync).toHaveLength(ids.length);
    expect(async).toHaveLength(ids.length);
    expect(new Set(sync).size).toBe(ids.length);
  });

  it('follows a route another branch adds: a method, its body and answer types, its idempotency key', () => {
    const doc = JSON.parse(JSON.stringify(DOCUMENT));
    doc.paths['/v1/refunds/{id}/approve'] = {
      post: {
        operationId: 'approveRefund',
        summary: 'Approve a refund',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'dry_run', in: 'query', schema: { type: 'boolean' } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', properties: { reason: { type: 'string', enum: ['a', 'b'] }, idempotency_key: { type: 'string' } }, required: ['reason'] },
            },
          },
        },
        responses: { 201: { content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, 'x-weird key': { type: 'integer' } }, required: ['id'] } } } } },
      },
    };
    doc.paths['/v1/unnamed'] = { get: { responses: { 204: { description: 'No content' } } } };
    const { types, operations } = generate(doc);
    expect(operations).toContain('"approveRefund": Operation("approveRefund", "POST", "/v1/refunds/{id}/approve", "body", "json"),');
    expect(operations).toMatch(/ {4}def approve_refund\(self, id: str, body: ApproveRefundBody, \*, query: Optional\[ApproveRefundQuery\] = None, .*\) -> ApproveRefundResponse:/);
    expect(operations).toMatch(/ {4}async def approve_refund\(self, id: str, body: ApproveRefundBody, /);
    expect(operations).toMatch(/ {4}def get_v1_unnamed\(self, \*, .*\) -> GetV1UnnamedResponse:/);
    expect(types).toContain('class ApproveRefundBody(_ApproveRefundBodyRequired, total=False):');
    expect(types).toContain('    reason: Literal["a", "b"]');
    expect(types).toContain('class ApproveRefundQuery(TypedDict, total=False):');
    // A key that is not a Python name takes the functional form.
    expect(types).toContain('_ApproveRefundResponseOptional = TypedDict("_ApproveRefundResponseOptional", {"x-weird key": int}, total=False)');
    expect(types).toContain('GetV1UnnamedResponse: TypeAlias = None');
  });

  it('keeps the clients own names free: an operation named close becomes close_operation', () => {
    const doc = { paths: { '/v1/close': { post: { operationId: 'close', responses: { 204: {} } } } }, components: { schemas: {} } };
    expect(generate(doc).operations).toMatch(/ {4}def close_operation\(self, /);
  });
});
