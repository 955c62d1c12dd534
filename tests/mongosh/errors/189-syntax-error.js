print('never printed');
let x = ;
