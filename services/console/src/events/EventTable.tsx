import { when } from '../format';
import type { UsageEvent } from './tail';

/** Usage events as text (their properties as JSON text, never markup). */
export function EventTable({ events, caption }: { events: UsageEvent[]; caption?: string }) {
  if (events.length === 0) return <p>No events.</p>;
  return (
    <table>
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Customer</th>
          <th scope="col">Time</th>
          <th scope="col">Properties</th>
          <th scope="col">Id</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.id}>
            <td>{e.event_name}</td>
            <td>{e.external_customer_id}</td>
            <td>{when(e.timestamp)}</td>
            <td>
              <code>{JSON.stringify(e.properties)}</code>
            </td>
            <td>{e.id}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
