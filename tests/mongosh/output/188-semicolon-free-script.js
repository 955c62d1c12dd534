const x = 1
const y = [2, 3]
print(x + y.length)
const z = x
;[4, 5].forEach(v => print(v))
