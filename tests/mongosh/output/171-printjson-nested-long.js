printjson({ user: { name: 'Ada Lovelace', langs: ['en', 'fr'], address: { city: 'London', zip: 'W1' } }, n: 1 });
printjson([{ _id: 1, v: 'a' }, { _id: 2, v: 'b' }]);
