/** Failpoints (ADR 0017): armed only by BILLSTREAM_FAILPOINTS at load, SIGKILL of the process itself. */
describe('failpoint', () => {
  const saved = process.env.BILLSTREAM_FAILPOINTS;
  afterEach(() => {
    if (saved === undefined) delete process.env.BILLSTREAM_FAILPOINTS;
    else process.env.BILLSTREAM_FAILPOINTS = saved;
    jest.restoreAllMocks();
  });

  /** A fresh copy of the module, loaded with the variable as given. */
  async function load(armed: string | undefined): Promise<typeof import('./failpoints')> {
    if (armed === undefined) delete process.env.BILLSTREAM_FAILPOINTS;
    else process.env.BILLSTREAM_FAILPOINTS = armed;
    let mod: typeof import('./failpoints') | undefined;
    await jest.isolateModulesAsync(async () => {
      mod = await import('./failpoints');
    });
    return mod!;
  }

  it('kills the process with SIGKILL at an armed name only', async () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { failpoint, armedFailpoints } = await load(' finalize.after-allocation , wallet.allocate.before-commit');
    expect(armedFailpoints()).toEqual(['finalize.after-allocation', 'wallet.allocate.before-commit']);
    failpoint('finalize.before-allocation');
    expect(kill).not.toHaveBeenCalled();
    failpoint('finalize.after-allocation');
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
  });

  it('does nothing when the variable is unset or empty, read once at load', async () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    for (const armed of [undefined, '', ' , ']) {
      const { failpoint, armedFailpoints } = await load(armed);
      process.env.BILLSTREAM_FAILPOINTS = 'finalize.after-allocation';
      failpoint('finalize.after-allocation');
      expect(armedFailpoints()).toEqual([]);
    }
    expect(kill).not.toHaveBeenCalled();
  });
});
