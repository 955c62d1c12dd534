// Verbose, self-describing field names: stored again in every document.
db.people.aggregate([
  {$project: {person_full_name_text: "$name", electronic_mail_address: "$email", date_of_birth_timestamp: "$born", country_of_nationality: "$nationality", free_text_notes_about_person: "$notes"}},
  {$out: "people"}
])
db.addresses.drop()
db.phones.drop()
db.passports.drop()
