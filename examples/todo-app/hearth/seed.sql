-- Development rows: `hearth db reset` runs this after the migrations.
insert into lists (name) values ('home'), ('work');
insert into todos (list_id, title, priority, tags)
  select id, 'Water the plants', 'low', '{garden}' from lists where name = 'home';
