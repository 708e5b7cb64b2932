-- A queue the app sends todo events to (pgmq, SPEC 4.4).
select pgmq.create('todo_events');
