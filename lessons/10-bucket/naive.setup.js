// One document per reading, indexed for "sensor X between t1 and t2".
db.readings.createIndex({sensor_id: 1, ts: 1})
